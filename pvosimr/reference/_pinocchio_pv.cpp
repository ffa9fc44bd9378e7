// pvosimr._pinocchio_pv: Pinocchio's own PV-OSIMr Delassus routine, callable from Python.
//
// pin (the Pinocchio wheel) binds computeDelassusMatrix (EFPA-style) but neither
// initPvDelassus nor computePvDelassusMatrix.  This one translation unit exposes a small
// class, PvDelassus, that runs initPvDelassus once for a (model, constraint list) pair and then
// computePvDelassusMatrix on every compute() call.
//
// Why a class that owns a pinocchio::Data: initPvDelassus writes the constraint topology
// (accumulation joints, constraint supports, ...) into the Data it is given and appends to
// vectors there, so it can be run only once per Data.  The user's Data never sees it.
//
// Conversions between numpy and Eigen use the converters that eigenpy registered in the
// Boost.Python registry when `import pinocchio` ran (pvosimr imports pinocchio first), so this
// module needs no eigenpy header and no eigenpy link: only Pinocchio's headers, Eigen, Boost.
//
// Compiled on first use by pvosimr/bridge.py against the installed `pin` wheel; see the flags there.

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/python.hpp>

#include "pinocchio/algorithm/delassus.hpp"

namespace bp = boost::python;

namespace
{
  typedef pinocchio::Model Model;
  typedef pinocchio::Data Data;
  typedef pinocchio::RigidConstraintModel ConstraintModel;
  typedef pinocchio::RigidConstraintData ConstraintData;
  typedef std::vector<ConstraintModel> ConstraintModelVector;
  typedef std::vector<ConstraintData> ConstraintDataVector;

  // How many times initPvDelassus ran in this process (tests check the Python cache with it).
  long g_init_calls = 0;

  std::string label(std::size_t k, const ConstraintModel & cm)
  {
    std::ostringstream out;
    out << "constraint " << k;
    if (!cm.name.empty())
      out << " ('" << cm.name << "')";
    return out.str();
  }

  class PvDelassus
  {
  public:
    PvDelassus(const Model & model, bp::object constraint_models)
    : njoints_(model.njoints)
    , nq_(model.nq)
    , nv_(model.nv)
    , size_(0)
    , data_(model)
    {
#if PINOCCHIO_VERSION_AT_LEAST(3, 5, 0) // before mimic joints, there is nothing to check
      if (!model.check(pinocchio::MimicChecker()))
        throw std::invalid_argument(
          "the model has mimic joints, which Pinocchio's PV-OSIMr does not support");
#endif
      // A Python sequence of RigidConstraintModel (list, tuple or StdVec_RigidConstraintModel):
      // the elements are copied; later changes to the Python objects do not reach this instance.
      const long n = bp::len(constraint_models);
      for (long k = 0; k < n; ++k)
      {
        bp::extract<const ConstraintModel &> item(constraint_models[k]);
        if (!item.check())
          throw std::invalid_argument(
            "constraint " + std::to_string(k) + " is not a pinocchio.RigidConstraintModel");
        cmodels_.push_back(item());
      }
      for (std::size_t k = 0; k < cmodels_.size(); ++k)
      {
        const ConstraintModel & cm = cmodels_[k];
        // initPvDelassus / computePvDelassusMatrix only handle these; anything else would reach
        // an assert or PINOCCHIO_UNREACHABLE (undefined behaviour in a release build).
        if (cm.joint1_id == 0 || cm.joint1_id >= (pinocchio::JointIndex)model.njoints)
          throw std::invalid_argument(
            label(k, cm) + " is on joint " + std::to_string(cm.joint1_id)
            + ", which is not a moving joint of the model");
        if (cm.joint2_id != 0)
          throw std::invalid_argument(
            label(k, cm) + " links two joints; PV-OSIMr handles link-to-world constraints only");
        if (cm.reference_frame != pinocchio::LOCAL)
          throw std::invalid_argument(label(k, cm) + " is not expressed in pinocchio.LOCAL");
        if (cm.type != pinocchio::CONTACT_3D && cm.type != pinocchio::CONTACT_6D)
          throw std::invalid_argument(label(k, cm) + " is neither CONTACT_3D nor CONTACT_6D");
        cdatas_.push_back(ConstraintData(cm));
#if PINOCCHIO_VERSION_AT_LEAST(4, 0, 0)
        size_ += cm.residualSize();
#else
        size_ += cm.size();  // renamed residualSize() in Pinocchio 4
#endif
      }
      pinocchio::initPvDelassus(model, data_, cmodels_);
      ++g_init_calls;
      delassus_.setZero(size_, size_);
    }

    // G = J M^-1 J^T at q, fully filled (Pinocchio fills the upper triangle).
    Eigen::MatrixXd compute(const Model & model, const Eigen::VectorXd & q)
    {
      run(model, q, 0.);
      return delassus_;
    }

    // Pinocchio's computeDampedDelassusMatrixInverse (PV route), on the initialised Data.
    Eigen::MatrixXd dampedInverse(const Model & model, const Eigen::VectorXd & q, double mu)
    {
      check(model, q);
      if (!(mu > 0.))
        throw std::invalid_argument("mu must be positive");
      Eigen::MatrixXd out(size_, size_);
      out.setZero();
      pinocchio::computeDampedDelassusMatrixInverse(
        model, data_, q, cmodels_, cdatas_, out, mu, false, true);
      symmetrize(out);
      return out;
    }

    long size() const
    {
      return size_;
    }

    long njoints() const
    {
      return njoints_;
    }

  private:
    void check(const Model & model, const Eigen::VectorXd & q) const
    {
      if (model.njoints != njoints_ || model.nq != nq_ || model.nv != nv_)
        throw std::invalid_argument(
          "model does not match the one this PvDelassus was built for (njoints/nq/nv differ)");
      if (q.size() != nq_)
        throw std::invalid_argument(
          "q has size " + std::to_string(q.size()) + ", expected model.nq = "
          + std::to_string(nq_));
    }

    static void symmetrize(Eigen::MatrixXd & m)
    {
      m.triangularView<Eigen::StrictlyLower>() = m.transpose();
    }

    void run(const Model & model, const Eigen::VectorXd & q, double mu)
    {
      check(model, q);
      if (size_ == 0)
        return;
      pinocchio::computePvDelassusMatrix(model, data_, q, cmodels_, cdatas_, delassus_, mu);
      symmetrize(delassus_);
    }

    int njoints_;
    int nq_;
    int nv_;
    long size_;
    Data data_;
    ConstraintModelVector cmodels_;
    ConstraintDataVector cdatas_;
    Eigen::MatrixXd delassus_;
  };

  long init_calls()
  {
    return g_init_calls;
  }

} // namespace

BOOST_PYTHON_MODULE(_pinocchio_pv)
{
  bp::scope().attr("PINOCCHIO_VERSION") = PINOCCHIO_VERSION;
  bp::scope().attr("EIGEN_VERSION") = std::to_string(EIGEN_WORLD_VERSION) + "."
                                      + std::to_string(EIGEN_MAJOR_VERSION) + "."
                                      + std::to_string(EIGEN_MINOR_VERSION);

  bp::def(
    "init_calls", &init_calls,
    "Number of times initPvDelassus has run in this process (one per PvDelassus built).");

  bp::class_<PvDelassus, boost::noncopyable>(
    "PvDelassus",
    "Pinocchio's PV-OSIMr Delassus matrix for one model and one constraint list.\n\n"
    "The constructor copies the constraint models and runs pinocchio::initPvDelassus once on a\n"
    "pinocchio::Data it owns; compute() then runs pinocchio::computePvDelassusMatrix.",
    bp::init<const Model &, bp::object>(bp::args("self", "model", "constraint_models")))
    .def(
      "compute", &PvDelassus::compute, bp::args("self", "model", "q"),
      "The Delassus matrix G = J M^-1 J^T at q (a fresh, symmetric numpy array).")
    .def(
      "damped_inverse", &PvDelassus::dampedInverse, bp::args("self", "model", "q", "mu"),
      "pinocchio::computeDampedDelassusMatrixInverse(..., mu, scaled=false, Pv=true) on the\n"
      "initialised Data: (G + mu I)^-1.")
    .add_property("size", &PvDelassus::size, "Total constraint rows m.")
    .add_property("njoints", &PvDelassus::njoints, "model.njoints this instance was built for.");
}
